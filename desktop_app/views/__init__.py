"""The Explorer's views. Each takes the shared :class:`~desktop_app.state.ExplorerState` and
draws immutable NumPy results (``model.Prediction``); none imports torch or calls the Predictor."""
