"""Answerers: turn a prompt (and the chunks in it) into an answer."""

from __future__ import annotations

from ragrail.answerers.base import Answerer, AnswerRequest, AnswerResult
from ragrail.answerers.standin import StandinAnswerer

__all__ = ["AnswerRequest", "AnswerResult", "Answerer", "StandinAnswerer"]
