"""NumPy attention maths the views and the evaluation share: the attention chapter's lessons and head pruning."""
