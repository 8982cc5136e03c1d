"""Sessions: File > Save session / Open session (:mod:`.save_open`), every field of a file checked
(:mod:`.fields`), a session of another model (:mod:`.model_a`) and model B in a session (:mod:`.model_b`)."""
