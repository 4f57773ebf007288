"""Experiments of Chowdhury, Zhou, Shroff (2021): private LQ control."""
