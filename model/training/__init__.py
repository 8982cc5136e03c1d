"""Training-side code: data loading, baselines, fine-tuning and distillation. Never imported by the runtime."""
