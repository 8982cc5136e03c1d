"""The jobs of the encoder block's views (issue 53): plain functions run by :class:`desktop_app.workers.jobs.Jobs`
on the one shared :class:`model.Predictor`, returning NumPy records."""
