"""How the conversation fixtures beside this file were written: by DeepEval 4.3.1 and
RAGAS 0.4.3 themselves, not by ragrail. Not run by the tests (neither library is a
dependency); kept so the files can be written again by a newer version:

    pip install --target /tmp/libs deepeval==4.3.1 ragas==0.4.3
    PYTHONPATH=/tmp/libs RAGRAIL=.venv/bin/ragrail \
        python tests/data/interop/conversations/write_fixtures.py

The ``*_resaved`` files are ragrail's export of golden.json (``ragrail export ... --golden``)
loaded by each library and saved again by it (DeepEval's ``add_goldens_from_json_file`` then
``save_as("json")``, RAGAS's ``from_jsonl`` then ``to_jsonl``): what a user who took the
golden set to the other tool and back hands to ``ragrail import``.

RAGAS's package __init__ imports every LLM client; its dataset classes are loaded
without it (they need only pydantic).
"""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

HERE = Path(__file__).parent
WINDOW = (
    "You can return most items within 30 days of delivery. Items must be unused and in\n"
    "their original packaging."
)
REFUND = (
    "Refunds go back to the original payment method within 5 business days after we receive\n"
    "the return."
)
EXPRESS = (
    "Standard delivery takes 3 to 5 business days. Express delivery arrives the next business "
    "day if you order before 2 pm."
)
TRACK = (
    "Every order gets a tracking number by email. Open Orders > Track to see where your parcel\nis."
)
STALE = "Premium members get free returns for 60 days."  # in no document


def deepeval_files() -> None:
    os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "YES")
    from deepeval.dataset import ConversationalGolden, EvaluationDataset
    from deepeval.test_case import Turn
    from deepeval.test_case.llm_test_case import RetrievedContextData, ToolCall

    goldens = [
        ConversationalGolden(
            name="return-then-refund",
            scenario="A customer wants to send back a jacket and asks when the money comes back.",
            expected_outcome="5 business days",
            context=[WINDOW, REFUND],
            turns=[
                Turn(role="user", content="Can I still return a jacket I got last week?"),
                Turn(
                    role="assistant",
                    content="Yes: within 30 days of delivery, if it is unused.",
                    retrieval_context=[
                        RetrievedContextData(source="returns.md", context=WINDOW),
                        STALE,
                    ],
                ),
                Turn(role="user", content="And when do I get my money?"),
                Turn(
                    role="assistant",
                    content="Within 5 business days after we receive the return.",
                    retrieval_context=[REFUND],
                ),
            ],
        ),
        ConversationalGolden(
            name="express-then-tracking",
            scenario="A customer in a hurry orders express and wants to follow the parcel.",
            expected_outcome="The customer knows to open Orders > Track to follow the parcel.",
            context=[EXPRESS, TRACK],
            turns=[
                Turn(role="assistant", content="Hi! How can I help?"),
                Turn(role="user", content="How fast is express delivery?"),
                Turn(
                    role="assistant",
                    content="The next business day if you order before 2 pm.",
                    retrieval_context=[EXPRESS],
                ),
                Turn(role="user", content="Where can I follow my parcel?"),
                Turn(
                    role="assistant",
                    content="Open Orders > Track.",
                    retrieval_context=[TRACK],
                    tools_called=[ToolCall(name="lookup_order", input_parameters={"id": "A1"})],
                ),
            ],
        ),
        # a golden to simulate: a scenario, no turns yet
        ConversationalGolden(
            name="close-account",
            scenario="A customer wants their account and data gone.",
            expected_outcome="The customer knows the data is deleted within 30 days.",
        ),
    ]
    dataset = EvaluationDataset(goldens=goldens)
    for kind in ("json", "jsonl", "csv"):
        dataset.save_as(kind, str(HERE), file_name="deepeval_conversations")

    # a test run as DeepEval saves it (TestRun.save): its conversations apart
    from deepeval.test_case import ConversationalTestCase, LLMTestCase
    from deepeval.test_case.api import create_api_test_case
    from deepeval.test_run.test_run import TestRun

    conversational = [
        ConversationalTestCase(name=g.name, scenario=g.scenario, context=g.context, turns=g.turns)
        for g in goldens[:2]
    ]
    single = LLMTestCase(
        name="invoice-pdf", input="Where are my invoices?", actual_output="Orders > Invoices."
    )
    run = TestRun(
        testFile="test_chat.py",
        testCases=[create_api_test_case(single, index=0)],
        conversationalTestCases=[
            create_api_test_case(c, index=i) for i, c in enumerate(conversational)
        ],
        metricsScores=[],
    )
    with open(HERE / "deepeval_test_run.json", "w") as f:
        run.save(f)


def ragas_files() -> None:
    lib = next(Path(p) / "ragas" for p in sys.path if (Path(p) / "ragas" / "messages.py").is_file())
    pkg = types.ModuleType("ragas")
    pkg.__path__ = [str(lib)]
    sys.modules["ragas"] = pkg
    from ragas.dataset_schema import EvaluationDataset, MultiTurnSample
    from ragas.messages import AIMessage, HumanMessage, ToolCall, ToolMessage

    def search(query: str) -> AIMessage:
        return AIMessage(
            content="", tool_calls=[ToolCall(name="search_help", args={"query": query})]
        )

    samples = [
        MultiTurnSample(
            user_input=[
                HumanMessage(content="Can I still return a jacket I got last week?"),
                search("return window"),
                ToolMessage(content=WINDOW),
                ToolMessage(content=STALE),
                AIMessage(content="Yes: within 30 days of delivery, if it is unused."),
                HumanMessage(content="And when do I get my money?"),
                search("refund timing"),
                ToolMessage(content=REFUND),
                AIMessage(content="Within 5 business days after we receive the return."),
            ],
            reference="5 business days",
            reference_topics=["returns", "refunds"],
        ),
        MultiTurnSample(
            user_input=[
                HumanMessage(content="How fast is express delivery?"),
                AIMessage(content="The next business day if you order before 2 pm."),
                HumanMessage(content="Where can I follow my parcel?"),
                AIMessage(content="Open Orders > Track."),
            ],
            reference="Orders > Track",
        ),
    ]
    dataset = EvaluationDataset(samples=samples)
    dataset.to_jsonl(HERE / "ragas_multi_turn.jsonl")
    dataset.to_csv(HERE / "ragas_multi_turn.csv")


def resaved() -> None:
    import subprocess
    import tempfile

    ragrail = os.environ.get("RAGRAIL", "ragrail")
    with tempfile.TemporaryDirectory() as tmp:
        for tool in ("deepeval", "ragas"):
            out, talks = Path(tmp) / f"{tool}-single", Path(tmp) / f"{tool}-conversations"
            subprocess.run(
                [ragrail, "export", tool, "--golden", str(HERE / "golden.json"),
                 "-o", str(out), "--conversations", str(talks)],
                check=True,
            )  # fmt: skip
            if tool == "deepeval":
                from deepeval.dataset import EvaluationDataset as DeepEvalDataset

                dataset = DeepEvalDataset()
                dataset.add_goldens_from_json_file(str(talks))
                dataset.save_as("json", str(HERE), file_name="deepeval_resaved")
            else:
                from ragas.dataset_schema import EvaluationDataset

                EvaluationDataset.from_jsonl(talks).to_jsonl(HERE / "ragas_resaved.jsonl")


if __name__ == "__main__":
    deepeval_files()
    ragas_files()
    resaved()
