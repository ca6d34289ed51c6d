import gc

from ragrail.gcpause import paused_gc


def test_collection_waits_inside_and_its_setting_is_restored_after():
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_paused_collector_stays_paused_and_an_error_still_restores():
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
    try:
        with paused_gc():
            raise KeyError("boom")
    except KeyError:
        pass
    assert gc.isenabled()
