"""Reading and writing the user's files: the one byte decoder (:mod:`.textio`) and the one atomic writer
(:mod:`.atomic`)."""
