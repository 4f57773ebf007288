"""dprl: reproducibility package for differentially private reinforcement learning.

Layout, bottom to top (each imports only the layers below it; tests/core/test_layers.py):
``checks`` (argument checks: NaN, infinity and ranges refused with the parameter named);
``privacy`` (mechanisms shared by all papers, the typed privacy setting) and ``envs``
(environments); ``runner`` (the core: job spec and context, random streams, result I/O,
bundles, lock); ``agents`` (algorithms, one subpackage per paper); ``experiments`` (job
functions, their declarations, and how one job runs); ``config`` (validation and expansion
of config.yaml); ``analysis`` (aggregation, fits, claims, figures); ``cli``.
"""

__version__ = "0.1.0"
