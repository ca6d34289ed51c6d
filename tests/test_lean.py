from ragrail.results import ArticleScores, RetrievedChunk


def test_instances_given_the_same_fields_share_one_set_and_keep_their_values():
    a = RetrievedChunk(id="a#1", source="a", rank=1, score=0.5, text="x")
    b = RetrievedChunk(id="b#2", source="b", rank=2, score=0.25, text="y")
    assert a.model_fields_set is b.model_fields_set
    assert a.model_fields_set == {"id", "source", "rank", "score", "text"}
    assert (a.id, a.score, b.id, b.score) == ("a#1", 0.5, "b#2", 0.25)


def test_different_fields_given_mean_different_sets_and_dumps_are_unchanged():
    empty = ArticleScores()
    some = ArticleScores(recall_at_k=0.5)
    assert empty.model_fields_set == set() and some.model_fields_set == {"recall_at_k"}
    assert some.model_dump()["recall_at_k"] == 0.5 and some.model_dump()["ndcg_at_k"] is None
    assert ArticleScores.model_validate_json(some.model_dump_json()) == some
