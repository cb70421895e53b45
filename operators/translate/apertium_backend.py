"""Rule-based translation with Apertium (Forcada et al. 2011), e.g. Debian ``apertium-eng-spa``.

Starting ``apertium`` costs ~0.3 s, so sentences are sent many per process call. They are joined
with a blank line between them: Apertium's text deformatter treats a blank line as a paragraph
end, a sentence boundary for the tagger and the transfer rules, and reproduces it in the output.
Each sentence is therefore translated exactly as ``printf '%s\\n' SENTENCE | apertium MODE``
would translate it alone (checked in the tests against per-sentence calls), without the trailing
newline. Sentences the separator cannot carry (empty, or containing a newline) are translated
one call each, and so is a whole chunk whose output does not split back into as many paragraphs
as went in; the counts of both are kept in :attr:`ApertiumTranslator.fallback_calls`.
"""

from __future__ import annotations

import shutil
import subprocess

from interlingua.operators.translate.backend import BackendSpec

SEPARATOR = "\n\n"
ISO_639_3 = {"en": "eng", "es": "spa", "ca": "cat", "fr": "fra", "pt": "por", "it": "ita", "de": "deu"}


def apertium_mode(source: str, target: str) -> str:
    """Apertium mode name for a pair of ISO 639-1 codes (``en``, ``es`` → ``eng-spa``)."""
    return f"{ISO_639_3.get(source, source)}-{ISO_639_3.get(target, target)}"


def apertium_available(mode: str | None = None) -> bool:
    """Whether the ``apertium`` command exists and (when given) offers ``mode``."""
    if shutil.which("apertium") is None:
        return False
    if mode is None:
        return True
    listed = subprocess.run(["apertium", "-l"], capture_output=True, text=True, check=False).stdout
    return mode in listed.split()


class ApertiumTranslator:
    """Translate with ``apertium MODE`` (see the module docstring)."""

    def __init__(self, spec: BackendSpec, mode: str, *, mark_unknown: bool = True, chunk_size: int = 2000,
                 timeout_s: float = 600.0):
        if chunk_size < 1:
            raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
        if not apertium_available(mode):
            raise ValueError(f"apertium mode {mode!r} is not installed (apt-get install apertium apertium-eng-spa)")
        self.spec = spec
        self.mode = mode
        self.chunk_size = chunk_size
        self.timeout_s = timeout_s
        self.command = ["apertium"] + ([] if mark_unknown else ["-u"]) + [mode]
        self.fallback_calls = 0

    def _run(self, text: str) -> str:
        completed = subprocess.run(
            self.command, input=text, capture_output=True, text=True, timeout=self.timeout_s, check=False
        )
        if completed.returncode != 0:
            raise RuntimeError(f"{' '.join(self.command)} failed ({completed.returncode}): {completed.stderr.strip()}")
        return completed.stdout

    def translate_one(self, sentence: str) -> str:
        """One process call for one sentence: the reference the batched path must equal."""
        output = self._run(sentence + "\n")
        return output[:-1] if output.endswith("\n") else output

    def _translate_chunk(self, sentences: list[str]) -> list[str]:
        output = self._run(SEPARATOR.join(sentences) + "\n")
        parts = output.removesuffix("\n").split(SEPARATOR)
        if len(parts) != len(sentences) or any("\n" in p for p in parts):
            self.fallback_calls += len(sentences)
            return [self.translate_one(s) for s in sentences]
        return parts

    def translate(self, sentences: list[str]) -> list[str]:
        outputs: list[str] = [""] * len(sentences)
        batchable = [i for i, s in enumerate(sentences) if s.strip() and "\n" not in s and "\r" not in s]
        batchable_set = set(batchable)
        for i, sentence in enumerate(sentences):
            if i not in batchable_set:
                self.fallback_calls += 1
                outputs[i] = self.translate_one(sentence)
        for start in range(0, len(batchable), self.chunk_size):
            indices = batchable[start : start + self.chunk_size]
            for i, text in zip(indices, self._translate_chunk([sentences[i] for i in indices])):
                outputs[i] = text
        return outputs
