"""Published figures of the peers, for experiments/reproduce.py's tables and
plots: each with its source and the hardware it was measured on. They are
references, printed in columns and bars of their own, never mixed with the
figures measured by a run. Only figures read in their source are here; where
a source could not be read (the per-model bars of TASO's Figure 7), the
figure is left out and the note says so.
"""

TENSAT = ("Yang et al., Equality Saturation for Tensor Graph Superoptimization (Tensat), "
          "MLSys 2021: the table of search time and runtime speedup on the paper's page "
          "(mwillsey.com/papers/tensat)")
TENSAT_HARDWARE = "a GPU (the model is stated in the paper; not checked here)"

# Model stems of this project -> the Tensat table's row: TASO's and Tensat's
# search time (s) and runtime speedup over the input graph (%).
TENSAT_TABLE = {
    "bert_base_seq128": ("BERT", 13.6, 1.4, 8.5, 9.2),
    "resnext50_32x4d": ("ResNeXt-50", 25.3, 0.7, 5.5, 8.8),
    "nasnetalarge": ("NasNet-A", 1226, 10.6, 1.9, 7.3),
    "nasrnn": ("NasRNN", 177.3, 0.5, 45.4, 68.9),
    "inception_v3": ("Inception-v3", 68.6, 5.1, 6.3, 10.0),
    "squeezenet1_1": ("SqueezeNet", 16.4, 0.3, 6.7, 24.5),
}


def tensat(stem):
    """{"name", "taso_search_s", "tensat_search_s", "taso_speedup", "tensat_speedup"}
    (speedups as ratios, 1.085 for 8.5%) or None."""
    row = TENSAT_TABLE.get(stem)
    if row is None:
        return None
    name, taso_s, tensat_s, taso_pct, tensat_pct = row
    return {"name": name, "taso_search_s": taso_s, "tensat_search_s": tensat_s,
            "taso_speedup": 1 + taso_pct / 100, "tensat_speedup": 1 + tensat_pct / 100}


TASO_PAPER = ("Jia et al., TASO: Optimizing Deep Learning Computation with Automatic Generation "
              "of Graph Substitutions, SOSP 2019")
TASO_NOTES = [
    f"{TASO_PAPER}, abstract: on five real-world DNN architectures TASO outperforms existing "
    "DNN frameworks by up to 2.8x. The per-model figures of its Figure 7 were not read in a "
    "source checked here and are left out.",
    "TASO's project page (catalyst.cs.cmu.edu/projects/taso.html): a ResNet module 1.3x "
    "faster on a V100 GPU after TASO's transformations.",
]

# The generator, at 4 operators.
TASO_GENERATOR = {
    "source": f"{TASO_PAPER}, as quoted in generator/README.md and issue 19",
    "graphs": "66M", "candidates": "28,744", "rules": "743", "time": "about 5 min",
}
TASO_GENERATOR_HERE = ("TASO's own generator, built and run on this machine by an earlier "
                       "session (generator/README.md): about 16.4M graphs and 619 rules at N=3")
TENSAT_ISSUE_NOTE = ("Issue 19 quotes Tensat's search as BERT 0.98 s and NasNet-A 8.4 s; the "
                     "table checked here gives 1.4 s and 10.6 s, and those are shown.")
