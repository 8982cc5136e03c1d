"""Text into model inputs: input checks and token-budget batches, a pair's segment ids, a long document's windows."""
