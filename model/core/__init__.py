"""The encoder core: configuration, the Transformer encoder, the tokenizer, weights I/O and resource paths.

* :mod:`.config`: :class:`~model.core.config.EncoderConfig` (the model's shape, JSON round trip);
* :mod:`.encoder`: :class:`~model.core.encoder.TransformerClassifier` (the one forward pass: ``embed`` then
  ``encode_with_maps``);
* :mod:`.layers`: scaled dot-product attention, multi-head self-attention, feed-forward, one encoder layer;
* :mod:`.positional`: the sinusoidal positional encoding;
* :mod:`.tokenizer`: the WordPiece tokenizer and :class:`~model.core.tokenizer.TextEncoder` (head+tail truncation);
* :mod:`.weights`: safetensors save/load of a model folder;
* :mod:`.paths`: where ``resources/`` is (source tree or PyInstaller bundle).

Everything above (inference, explanations, batch scoring, training, the GUI) builds on this package;
it imports nothing of theirs.
"""
