"""pet_bench's table: which rows compare two different files."""
import pet_bench


def row(full_ms, partial_ms, same_file):
    report = lambda written: {"speed_check": {"written": written}}
    return {"times": {"input": (10.0, 11.0), "full": (full_ms, full_ms), "partial":
                      (partial_ms, partial_ms)},
            "full": {"report": report("optimized")}, "partial": {"report": report("optimized")},
            "correction": (0.0, 10.0), "correction_error": None, "same_file": same_file}


def table_row(lines, stem):
    return next(l for l in lines if l.startswith(f"| {stem} | 1 | 10.0"))


def test_a_row_whose_two_optimizations_wrote_one_file_says_so():
    lines = pet_bench.table_lines([("same", 1, row(9.9, 10.0, True)),
                                   ("differ", 1, row(9.9, 8.0, False))])
    assert table_row(lines, "same").endswith("| 0.99x | 1.00x | optimized / optimized "
                                             "(one file: byte-identical) |")
    assert table_row(lines, "differ").endswith("| 1.24x | 1.25x | optimized / optimized |")


def test_rows_kept_before_the_comparison_existed_read_as_two_files():
    r = row(9.9, 8.0, False)
    del r["same_file"]
    assert "byte-identical" not in table_row(pet_bench.table_lines([("old", 1, r)]), "old")


def test_a_partial_search_that_kept_the_full_file_says_full():
    r = row(9.9, 10.0, True)
    r["full"]["path"] = "/w/m.b1.full.onnx"
    r["partial"]["report"] = {"speed_check": {"written": "input"}, "model": "/w/m.b1.full.onnx"}
    assert table_row(pet_bench.table_lines([("kept", 1, r)]), "kept").endswith(
        "| optimized / full (one file: byte-identical) |")
    r["partial"]["report"]["model"] = "/w/m.b1.onnx"
    assert table_row(pet_bench.table_lines([("kept", 1, r)]), "kept").endswith(
        "| optimized / input (one file: byte-identical) |")
