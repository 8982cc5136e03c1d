"""The task a model's head was trained for (single-label, multi-label, regression) and how its logits are read."""
