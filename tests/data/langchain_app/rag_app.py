"""A LangChain app as ragrail evaluates it: a retriever, a prompt, a chat model and an
output parser, composed with LCEL, and the one function ragrail calls.

The retriever scores paragraphs by the words they share with the question (any
``BaseRetriever`` works the same way: a vector store's ``as_retriever()``, BM25 from
langchain-community). The chat model is ``RAG_MODEL``'s: with ``anthropic`` it is Claude
(``pip install langchain-anthropic``, ``ANTHROPIC_API_KEY``); the default, ``offline``,
answers with the first retrieved paragraph, so the example runs anywhere."""

from __future__ import annotations

import os
import re
from pathlib import Path

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable, RunnableLambda

DOCS = Path(__file__).parent / "docs"
TOP_K = int(os.environ.get("RAG_TOP_K", "2"))
WORD = re.compile(r"[a-z0-9_@-]+")
STOP = frozenset("a an and are can do does for how i if in is of the to what where with".split())


def load_documents() -> list[Document]:
    """One Document per paragraph; metadata["source"] is the file's path, as a loader
    (TextLoader, DirectoryLoader) sets it."""
    docs = []
    for path in sorted(DOCS.glob("*.md")):
        paragraphs = [p.strip() for p in path.read_text(encoding="utf-8").split("\n\n")]
        for i, text in enumerate(p for p in paragraphs if p and not p.startswith("#")):
            docs.append(
                Document(
                    id=f"{path.stem}-{i}",
                    page_content=text,
                    metadata={"source": str(path.relative_to(DOCS.parent))},
                )
            )
    return docs


class KeywordRetriever(BaseRetriever):
    documents: list[Document]
    k: int = 2

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        wanted = set(WORD.findall(query.lower())) - STOP
        scored = []
        for doc in self.documents:
            shared = len(wanted & set(WORD.findall(doc.page_content.lower())))
            scored.append((shared / (len(wanted) or 1), doc))
        scored.sort(key=lambda pair: -pair[0])
        return [
            Document(id=d.id, page_content=d.page_content, metadata={**d.metadata, "score": s})
            for s, d in scored[: self.k]
            if s > 0
        ]


def chat_model() -> Runnable:
    if os.environ.get("RAG_MODEL", "offline") == "anthropic":
        from langchain_anthropic import ChatAnthropic

        return ChatAnthropic(model="claude-opus-5", temperature=0)

    # offline: the first paragraph of the context, or "I don't know" when there is none
    def first_paragraph(prompt) -> str:
        context = prompt.to_messages()[-1].content.split("Context:\n", 1)[1]
        return context.split("\n\n")[0].strip() or "I don't know."

    return RunnableLambda(first_paragraph)


retriever = KeywordRetriever(documents=load_documents(), k=TOP_K)
prompt = ChatPromptTemplate.from_messages(
    [
        ("system", 'Answer from the context only. If it does not say, answer "I don\'t know."'),
        ("human", "Question: {question}\n\nContext:\n{context}"),
    ]
)
chain = prompt | chat_model() | StrOutputParser()


# --8<-- [start:answer]
def answer(question: str) -> dict:
    """What ragrail calls: the answer and the documents it was given, as ragrail reads
    them. Sources are file paths (ragrail reads docs/audit.md as the document "audit")."""
    docs = retriever.invoke(question)
    text = chain.invoke(
        {"question": question, "context": "\n\n".join(d.page_content for d in docs)}
    )
    return {
        "answer": text,
        "contexts": [
            {
                "id": d.id,
                "source": d.metadata["source"],
                "text": d.page_content,
                "score": d.metadata.get("score"),
            }
            for d in docs
        ],
        "settings": {"top_k": TOP_K},
    }


# --8<-- [end:answer]
