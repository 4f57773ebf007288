"""dprl: reproducibility package for differentially private reinforcement learning.

Layout: ``privacy`` (mechanisms shared by all papers), ``envs`` (environments),
``agents`` (algorithms, one subpackage per paper), ``experiments`` (job functions and
their declarations), ``runner`` (one job outside Snakemake), ``config`` (validation and
expansion of config.yaml), ``analysis`` (aggregation, fits, claims, figures).
"""

__version__ = "0.1.0"
