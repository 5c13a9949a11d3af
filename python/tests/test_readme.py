"""The README's Python example, run as written: the first ```python block of README.md's usage
section, in a directory holding the model.onnx it reads (a dynamic batch, like an exporter's)
and the device files it names."""

import os
import re

import onnx

from conftest import ROOT, two_conv_model


def readme_example():
    text = (ROOT / "README.md").read_text()
    usage = text[text.index("## Usage"):]
    return re.search(r"```python\n(.*?)```", usage, re.S).group(1)


def test_readme_python_example(tmp_path, monkeypatch, capsys):
    onnx.save(two_conv_model(size=32), str(tmp_path / "model.onnx"))
    os.symlink(ROOT / "optimizer", tmp_path / "optimizer")
    monkeypatch.chdir(tmp_path)
    exec(compile(readme_example(), "README.md", "exec"), {})
    assert (tmp_path / "model.tso.onnx").exists()
    assert capsys.readouterr().out.startswith("{'before': 5, 'after': 3}")  # operators
