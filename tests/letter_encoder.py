"""The source of a ``py:MODULE:make`` encoder for ``interlingua eval`` tests: each text as its counts of the letters
a–j and a constant 1 (a test writes it to a file on ``sys.path`` and names it in ``--model``)."""

LETTER_ENCODER_MODULE = r'''
import numpy as np

class LetterCounts:
    name = "letter-counts"
    def encode(self, texts):
        return np.array([[t.count(c) for c in "abcdefghij"] + [1.0] for t in texts], dtype=float)

def make():
    return LetterCounts()
'''
