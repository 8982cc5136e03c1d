"""The task a model's head was trained for (single-label, multi-label, regression) and how its logits are read:
one :class:`~model.tasks.types.TaskType` class per task (:mod:`model.tasks.types`), the loaded model's
:class:`~model.tasks.task.Task` (:mod:`model.tasks.task`), and the torch read-out (:mod:`model.tasks.readout`)."""
