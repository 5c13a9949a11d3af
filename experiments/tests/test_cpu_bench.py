"""cpu_bench.alternate, the timing protocol every benchmark script shares."""
import os

import cpu_bench


def test_alternate_takes_min_and_median_and_drops_a_failed_configuration():
    calls = []

    def timer(name, results):
        def time(n):
            calls.append((name, n))
            return results.pop(0)
        return time

    timers = [("a", timer("a", [(None, None), ((3.0, 4.0), None), ((2.0, 6.0), None),
                                ((5.0, 5.0), None)])),
              ("b", timer("b", [(None, None), (None, "exit 2: bad")]))]
    res = cpu_bench.alternate("m", timers, 3, 2, 7)
    assert res == {"a": (2.0, 5.0), "b": "(round 1) exit 2: bad"}
    # one warm-up process of 2 runs each, then rounds of 7; b is not timed again
    assert calls == [("a", 2), ("b", 2), ("a", 7), ("b", 7), ("a", 7), ("a", 7)]


def test_alternate_gives_up_when_every_configuration_failed():
    res = cpu_bench.alternate("m", [("a", lambda n: (None, "no binary"))], 5, 2, 7)
    assert res == {"a": "no binary"}


def test_plan_choices_older_than_the_binary_are_stale(tmp_path):
    (tmp_path / "tso").mkdir()
    old, new = tmp_path / "tso" / "plans-a.json", tmp_path / "tso" / "plans-b.json"
    binary = tmp_path / "tso-binary"
    for path, mtime in ((old, 100), (binary, 200), (new, 300)):
        path.write_text("{}")
        os.utime(path, (mtime, mtime))
    assert cpu_bench.stale_plan_choices(str(tmp_path), str(binary)) == [str(old)]
    assert cpu_bench.stale_plan_choices(str(tmp_path), str(tmp_path / "no-binary")) == []


def test_tso_processes_keep_their_plan_choices_in_the_cache_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    cpu_bench.keep_plan_choices_in(str(tmp_path))
    assert os.environ["XDG_CACHE_HOME"] == str(tmp_path)
