"""Zhou (2022) linear mixture MDP experiments."""
