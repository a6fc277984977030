"""Measure kernels, one family per module or package, on prepared rankings (no file parsing here).

- :mod:`.markov_precision`: MP and MPcont (Ferrante, Ferro & Maistro, SIGIR 2014);
- :mod:`.carterette` and :mod:`.carterette_distributions`: M1–M4 (Carterette, SIGIR 2011);
- :mod:`.tbg` and :mod:`.time_model`: Time-Biased Gain (Smucker & Clarke, SIGIR 2012);
- :mod:`.stopping_time`: P@H (Ferrante & Ferro, ICTIR 2020);
- :mod:`.standard`: AP, P@k, Rprec, bpref, RR, nDCG and binary RBP in float64, with trec_eval's definitions.

The ``ir_measures`` Measure objects that call these kernels live in :mod:`irmeasures_markov.plugin` (the
standard measures are ``ir_measures``' own).
"""
