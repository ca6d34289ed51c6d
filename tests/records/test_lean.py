from ragrail.records.results import ArticleScores, RetrievedChunk


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


def test_assigning_a_field_on_one_instance_never_marks_it_set_on_another():
    # pydantic adds an assigned name to the fields-set in place: a shared set must be
    # copied first, or one case's assignment changes every other's exclude_unset dump
    shared_before = ArticleScores()
    assigned = ArticleScores()
    assigned.recall_at_k = 0.5
    assert assigned.model_fields_set == {"recall_at_k"}
    assert assigned.model_dump(exclude_unset=True) == {"recall_at_k": 0.5}
    assert shared_before.model_fields_set == set()
    assert shared_before.model_dump(exclude_unset=True) == {}
    built_after = ArticleScores()
    assert built_after.model_fields_set == set()
    assert built_after.model_fields_set is shared_before.model_fields_set


def test_assigning_a_field_already_given_keeps_the_shared_set():
    a = RetrievedChunk(id="a#1", source="a", rank=1, score=0.5, text="x")
    b = RetrievedChunk(id="b#2", source="b", rank=2, score=0.25, text="y")
    a.score = 0.75
    assert a.model_fields_set is b.model_fields_set
    assert (a.score, b.score) == (0.75, 0.25)


def test_instances_assigned_the_same_new_field_share_a_set_again():
    """A cause given to 85,000 failing cases must not cost a set each."""
    from ragrail.records.results import ArticleScores

    a, b, c = ArticleScores(), ArticleScores(), ArticleScores()
    a.recall_at_k = 0.5
    b.recall_at_k = 0.25
    assert a.model_fields_set is b.model_fields_set
    assert a.model_fields_set == {"recall_at_k"}
    assert c.model_fields_set == set() and ArticleScores().model_fields_set == set()
    a.ndcg_at_k = 0.1
    assert a.model_fields_set == {"recall_at_k", "ndcg_at_k"}
    assert b.model_fields_set == {"recall_at_k"}
