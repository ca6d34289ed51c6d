"""ragrail.settings: the project file and the overrides, resolved once."""

from __future__ import annotations

import pytest

from ragrail.app import load_project
from ragrail.errors import InputError
from ragrail.project import example_dir
from ragrail.settings import (
    Overrides,
    answerer_spec,
    pipeline_settings,
    resolve,
    scoring_options,
)


@pytest.fixture
def project():
    return load_project(example_dir("kitebase") / "ragrail.toml")


def test_resolve_is_each_stages_settings_once(project):
    o = Overrides(top_k=1, repeats=2, timeout=5, no_cache=True)
    settings = resolve(project, o)
    assert settings.answerer == answerer_spec(project, o)
    assert settings.pipeline == pipeline_settings(project, o)
    assert settings.scoring == scoring_options(project, o)
    assert (settings.repeats, settings.judge, settings.backend.local) == (2, None, True)
    assert settings.docs == project.docs
    # the call flags bound the user's own system as they bind model calls
    assert settings.system.timeout == 5
    assert settings.system.concurrency == project.config.system.concurrency


def test_the_backend_is_checked_before_the_answerer(project):
    with pytest.raises(InputError, match="--address is the Ray cluster's"):
        resolve(project, Overrides(address="h:1", claude=True, answerer="openai"))
    with pytest.raises(InputError, match="contradict"):
        resolve(project, Overrides(claude=True, answerer="openai"))


def test_require_citation_is_auto_unless_the_file_says_true_or_false(project, tmp_path):
    from ragrail.project import load_config

    options = scoring_options(project, Overrides(docs=tmp_path))
    assert (options.require_citation, options.docs) == ("auto", tmp_path)
    assert scoring_options(project).docs == project.docs
    for written, expected in (("true", True), ("false", False), ('"auto"', "auto")):
        (tmp_path / "ragrail.toml").write_text(f"[scoring]\nrequire_citation = {written}\n")
        assert scoring_options(load_config(tmp_path / "ragrail.toml")).require_citation == expected
    for bad in ('"yes"', "1", '"true"'):
        (tmp_path / "ragrail.toml").write_text(f"[scoring]\nrequire_citation = {bad}\n")
        with pytest.raises(
            InputError, match=r"key 'scoring\.require_citation': must be true, false"
        ):
            load_config(tmp_path / "ragrail.toml")
