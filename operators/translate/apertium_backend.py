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
ISO_639_3 = {"en": "eng", "es": "spa", "ca": "cat", "fr": "fra", "pt": "por", "it": "ita", "de": "deu",
             "gl": "glg", "eo": "epo", "eu": "eus", "is": "isl", "mk": "mkd"}

#: English -> X directions the Debian packages install (``apt-cache search apertium``, Debian 12): the
#: package and its mode. ``apertium-eu-en``, ``apertium-isl-eng`` and ``apertium-mkd-eng`` exist too, but
#: install only the X -> English direction (modes ``eu-en``, ``isl-eng``, ``mkd-eng``).
ENGLISH_TO: dict[str, tuple[str, str]] = {
    "es": ("apertium-eng-spa", "eng-spa"),
    "ca": ("apertium-eng-cat", "eng-cat"),
    "gl": ("apertium-en-gl", "en-gl"),
    "eo": ("apertium-eo-en", "en-eo"),
    "hbs": ("apertium-hbs-eng", "eng-hbs"),
}


def apertium_mode(source: str, target: str) -> str:
    """Apertium mode name for a language pair (``en``, ``es`` → ``eng-spa``; ``en``, ``gl`` → ``en-gl``).

    Packages name their modes with ISO 639-3 or 639-1 codes; the first spelling that is installed wins,
    else the ISO 639-3 one (so the error names a plausible mode)."""
    codes = [(ISO_639_3.get(source, source), ISO_639_3.get(target, target)), (source, target),
             (ISO_639_3.get(source, source), target), (source, ISO_639_3.get(target, target))]
    candidates = list(dict.fromkeys(f"{s}-{t}" for s, t in codes))
    installed = installed_modes()
    return next((mode for mode in candidates if mode in installed), candidates[0])


def install_hint(mode: str) -> str:
    """What to install for ``mode``: the Debian package when one is known."""
    package = next((package for package, installs in ENGLISH_TO.values() if installs == mode), None)
    if package:
        return f"apt-get install apertium {package}"
    known = ", ".join(f"{lang} ({package})" for lang, (package, _) in ENGLISH_TO.items())
    return (f"no known Debian package installs mode {mode} (`apertium -l` lists the installed ones; English -> X "
            f"packages: {known}); or use backend marian")


def installed_modes() -> set[str]:
    """Modes ``apertium -l`` lists (empty when Apertium is not installed)."""
    if shutil.which("apertium") is None:
        return set()
    return set(subprocess.run(["apertium", "-l"], capture_output=True, text=True, check=False).stdout.split())


def apertium_available(mode: str | None = None) -> bool:
    """Whether the ``apertium`` command exists and (when given) offers ``mode``."""
    if shutil.which("apertium") is None:
        return False
    return mode is None or mode in installed_modes()


class ApertiumTranslator:
    """Translate with ``apertium MODE`` (see the module docstring); ``mark_unknown`` None: the spec's."""

    def __init__(self, spec: BackendSpec, mode: str, *, mark_unknown: bool | None = None, chunk_size: int = 2000,
                 timeout_s: float = 600.0):
        if chunk_size < 1:
            raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
        if not apertium_available(mode):
            raise ValueError(f"apertium mode {mode!r} is not installed ({install_hint(mode)})")
        self.spec = spec
        self.mode = mode
        self.chunk_size = chunk_size
        self.timeout_s = timeout_s
        mark_unknown = spec.mark_unknown if mark_unknown is None else mark_unknown
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
