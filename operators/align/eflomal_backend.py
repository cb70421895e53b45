"""eflomal (Östling & Tiedemann 2016, PyPI ``eflomal``) as a second word aligner.

eflomal samples alignments under a Bayesian IBM-style model (lexical, HMM jump and fertility
parameters) in both directions. Its parameters are not kept between runs; what carries over is a
*priors* file (lexical, jump and fertility counts from an alignment of a training corpus, eflomal's
own text format). As with fast_align, priors are learned once on the corpus
(:func:`learn_eflomal_priors`) and every shard is then aligned on its own with them
(:class:`EflomalAligner`), so new shards get the corpus's statistics. The directional links are
symmetrized with :func:`~interlingua.operators.align.symmetrize.symmetrize`, as fast_align's.

eflomal's sampler is randomized and its library takes no seed: its binary reads one from ``/dev/urandom``, and
its samplers draw their streams from that seed in whatever order OpenMP threads reach them. Each run here is
seeded from its input (:func:`_seed_bytes`: the pairs and the priors), through a copy of the binary that reads
``seed`` in its working folder instead (:func:`verified_binary`: one copy per user and state folder, checked before each
use; each run in its own private folder under ``<state>/tmp`` with its own seed), with OpenMP limited to 2 threads (one per direction; each direction's samplers then run
one after the other, in order). So the same pairs and priors give the same links whatever the machine's core count,
and the links of a pair depend only on the other pairs of its *unit*: :class:`EflomalAligner` aligns consecutive
runs of ``unit_pairs`` (default :data:`UNIT_PAIRS`) pairs one by one, so a caller that hands it the same units
(``bitext-corpus``: a shard's pairs; ``interlingua align``: lines ``k * UNIT_PAIRS ..``) gets the same bytes on one
worker or several.

eflomal reads its text with ``str.split()``, which also splits at no-break and other Unicode spaces; our tokens
(fast_align's: split at spaces and tabs only) may hold those, so a token holding any is passed escaped
(:func:`eflomal_token`) and eflomal's indices are ours.

The copy must be executable where it is written (``<state>/tmp``): :func:`require_runnable` starts it once before any
work, so a state folder mounted ``noexec`` is one line to the user, not an error inside the first run or actor.

A priors directory holds ``eflomal_priors.txt`` and ``eflomal_params.json`` (written last, with the priors' SHA-256
and size, checked when an :class:`EflomalAligner` opens the folder).
"""

from __future__ import annotations

import hashlib
import io
import contextlib
import errno
import json
import math
import os
import re
import shutil
import stat
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Sequence

from interlingua.core.errors import UserError
from interlingua.core.no_follow import open_file_no_follow, open_folder_no_follow
from interlingua.core.runtime import state_path, state_tempdir, state_tempdir_root
from interlingua.core import state_tmp  # state_tmp.euid(): the id user_folder_name() names the folder by
from interlingua.core.state_tmp import binary_folder_name, user_folder_name
from interlingua.operators.align.parameter_files import FILES_KEY, ParametersError, file_records, read_meta, read_recorded
from interlingua.operators.align.pharaoh import format_pharaoh, parse_pharaoh
from interlingua.operators.align.symmetrize import SYMMETRIZATIONS, symmetrize

PRIORS_FILE = "eflomal_priors.txt"
PARAMS_FILE = "eflomal_params.json"
#: Most tokens a side of a pair may have: eflomal gives a sentence of 1,024 tokens or more no link at all, silently.
MAX_TOKENS = 1023
#: Pairs :class:`EflomalAligner` aligns in one eflomal run (``bitext-corpus``'s default shard size): a unit's links
#: depend on its own pairs only, so units cut at the same places give the same links on any number of workers.
UNIT_PAIRS = 4096
#: OpenMP threads an eflomal run may use: one per direction, so each direction's samplers draw their random streams
#: in order (on more threads they take them in the order the threads arrive, and the links vary from run to run).
THREAD_LIMIT = 2
SEED_FILE = "seed"  # what the seeded binary opens in its working folder where eflomal's opens /dev/urandom
_SYSTEM_SEED = b"/dev/urandom\0"
_seeded_image: bytes | None = None  # this process's seeded copy of the binary, made once
_binary_lock = threading.Lock()  # one thread checks and writes the shared copy at a time
#: Introduces an escaped character in a token given to eflomal (a private-use character).
ESCAPE_MARK = "\ue000"
_ESCAPED = re.compile("[\\s\ue000]")  # what str.split() splits at (Unicode spaces), and the mark itself


def eflomal_token(token: str) -> str:
    """``token`` as eflomal gets it: each character ``str.split()`` would split it at, and :data:`ESCAPE_MARK`, replaced
    by the mark and its code point in 6 hex digits (distinct tokens stay distinct; any other token is unchanged)."""
    return _ESCAPED.sub(lambda found: f"{ESCAPE_MARK}{ord(found.group()):06x}", token)


def _eflomal_lines(sentences: Sequence[Sequence[str]]) -> list[str]:
    """One line per sentence, its tokens escaped (:func:`eflomal_token`) and joined by spaces."""
    return [" ".join(map(eflomal_token, sentence)) + "\n" for sentence in sentences]


def _run_eflomal(sources: Sequence[Sequence[str]], targets: Sequence[Sequence[str]], priors: bytes | None) -> tuple[list[str], list[str]]:
    """Forward and reverse Pharaoh lines (source-target order) of pairs with two non-empty sides of at most
    :data:`MAX_TOKENS` tokens (a longer side is a ``ValueError``: eflomal would give it no link), from one seeded
    eflomal run over all of them (its defaults: model 3, 3 samplers, NULL prior 0.2, iterations from the pair count).
    ``priors``: the priors file's bytes, as checked against their record (never read again from the folder)."""
    import eflomal

    for k, (source, target) in enumerate(zip(sources, targets)):
        if max(len(source), len(target)) > MAX_TOKENS:
            raise ValueError(f"pair {k} has a side of {max(len(source), len(target))} tokens; eflomal aligns at most "
                             f"{MAX_TOKENS} (it gives a longer sentence no link): reject longer pairs first")

    src_lines, tgt_lines = _eflomal_lines(sources), _eflomal_lines(targets)
    with state_tempdir(prefix="eflomal-run-") as work:  # the corpus's text: private, under <state>/tmp
        src_file, tgt_file, converted = (os.path.join(work, name) for name in ("source", "target", "priors"))
        with open(src_file, "wb") as src, open(tgt_file, "wb") as tgt, open(converted, "w", encoding="utf-8") as out:
            if priors is None:
                eflomal.Aligner().prepare_files(src_lines, src, tgt_lines, tgt, None, None)
            else:  # read as a text file is (universal newlines)
                with io.TextIOWrapper(io.BytesIO(priors), encoding="utf-8") as priors_text:
                    eflomal.Aligner().prepare_files(src_lines, src, tgt_lines, tgt, priors_text, out)
        with open(os.path.join(work, SEED_FILE), "wb") as seed:
            seed.write(_seed_bytes(src_lines, tgt_lines, priors))
        fwd, rev = os.path.join(work, "fwd"), os.path.join(work, "rev")
        options = ["-m", "3", "-n", "3", "-N", "0.2", "-q", "-s", src_file, "-t", tgt_file, "-f", fwd, "-r", rev,
                   *_iteration_options(len(src_lines))] + (["-p", converted] if priors is not None else [])
        with verified_binary() as binary:  # reads the seed file of its working folder: one copy serves every run
            try:
                done = binary.run(options, cwd=work, env=_thread_limited(os.environ), capture_output=True, text=True)
            except PermissionError as err:  # checked before work starts (require_runnable); here: a cluster node's
                raise RuntimeError(_not_runnable(binary.path, err, "in the environment this node's Ray workers "
                                                                   "start with")) from err
        if done.returncode != 0:
            raise RuntimeError(f"eflomal exited with {done.returncode}: {done.stderr.strip()[-2000:]}")
        with open(fwd, encoding="utf-8") as handle:
            forward = handle.read().split("\n")[: len(sources)]
        with open(rev, encoding="utf-8") as handle:
            reverse = handle.read().split("\n")[: len(sources)]
    if len(forward) != len(sources) or len(reverse) != len(sources):
        raise RuntimeError(f"eflomal returned {len(forward)} / {len(reverse)} alignments for {len(sources)} pairs")
    return forward, reverse


def _iteration_options(pairs: int) -> list[str]:
    """eflomal's own iteration counts for ``pairs`` sentence pairs with model 3 (its library's rule: n = 5000 / sqrt(pairs)
    rounded, at least 2, sampled with the fertility model; a quarter of that, at least 2 and 1, with IBM1 and the HMM)."""
    iterations = max(2, int(round(5000 / math.sqrt(pairs))))
    quarter = max(1, iterations // 4)
    return ["-1", str(max(2, quarter)), "-2", str(quarter), "-3", str(iterations)]


def _seed_bytes(src_lines: Sequence[str], tgt_lines: Sequence[str], priors: bytes | None) -> bytes:
    """eflomal's 64-bit seed for a run: the first 8 bytes of the SHA-256 of its input lines and priors file's bytes.

    The priors come after the lines, so each unit hashes them again (about 0.4 ms for 450 KB, against seconds of
    sampling): a digest of the priors taken once and combined with each unit's would change every seed, and so the
    links of every eflomal corpus built before."""
    digest = hashlib.sha256(b"interlingua eflomal seed\0")
    for lines in (src_lines, tgt_lines):
        for line in lines:
            digest.update(line.encode("utf-8"))
        digest.update(b"\0")
    if priors is not None:
        digest.update(priors)
    return digest.digest()[:8]


def _seeded_binary() -> bytes:
    """This process's seeded copy of eflomal's binary (:func:`seeded_image`), read and made once."""
    global _seeded_image
    if _seeded_image is None:
        import eflomal

        path = os.path.join(os.path.dirname(eflomal.__file__), "bin", "eflomal")
        with open(path, "rb") as handle:
            _seeded_image = seeded_image(handle.read(), path)
    return _seeded_image


def seeded_binary_path() -> str:
    """The seeded copy of eflomal's binary (checked, written when missing: :func:`verified_binary`)."""
    with verified_binary() as binary:
        return binary.path


class VerifiedBinary:
    """The seeded binary at ``path``, open as ``handle`` (the file checked, read-only) while the ``with`` lasts."""

    def __init__(self, path: str, handle: int) -> None:
        self.path, self.handle = path, handle

    def run(self, options: Sequence[str], **kwargs) -> subprocess.CompletedProcess:
        """``subprocess.run`` of the binary with ``options``: where ``/proc/self/fd`` exists (Linux), the program
        started is the file checked, through its descriptor (a file put at ``path`` since is not run); elsewhere the
        file at ``path``. Its ``argv[0]`` is ``path`` either way. A start refused as "text file busy" is tried again
        (:data:`_BUSY_TRIES` times): a process forked by another thread while this one wrote the binary holds the write
        handle until it execs."""
        if os.path.isdir(_OPEN_FILES):
            kwargs |= {"executable": os.path.join(_OPEN_FILES, str(self.handle)), "pass_fds": (self.handle,)}
        for attempt in range(1, _BUSY_TRIES):
            try:
                return subprocess.run([self.path, *options], **kwargs)
            except OSError as err:
                if err.errno != errno.ETXTBSY:
                    raise
            time.sleep(0.05 * attempt)
        return subprocess.run([self.path, *options], **kwargs)


_BUSY_TRIES = 5  # starts of the seeded binary tried while it is "text file busy" (ETXTBSY)


_OPEN_FILES = "/proc/self/fd"  # a process's open files by descriptor (Linux): a program started from one runs that file


@contextlib.contextmanager
def verified_binary() -> Iterator[VerifiedBinary]:
    """The seeded copy of eflomal's binary, in ``<state>/tmp/u<uid>/eflomal-<its SHA-256, 16 digits>/eflomal``, run by
    every eflomal run (it opens :data:`SEED_FILE` relative to its working folder, the run's own): the copy depends on
    eflomal's binary only, so every process of this user and state folder shares one and none leaves a copy behind (a
    Ray actor killed skips its exit handlers); each user of a shared state folder has their own
    (:func:`user_tempdir`). Checked before each use (:func:`_trusted_binary`: a private folder of ours holding exactly
    this image); anything else there is removed and the copy written again (:func:`_write_binary`)."""
    image = _seeded_binary()
    folder = os.path.join(user_tempdir(), binary_folder_name(image))
    binary = os.path.join(folder, "eflomal")
    with _binary_lock:
        handle = _trusted_binary(folder, binary, image)
        if handle is None:
            _write_binary(folder, binary, image)
            handle = _trusted_binary(folder, binary, image)
        if handle is None:
            raise RuntimeError(f"{binary} changed as soon as it was written: eflomal's seeded binary is not run from "
                               f"there (hint: keep {os.path.dirname(folder)} for this user only)")
    try:
        yield VerifiedBinary(binary, handle)
    finally:
        os.close(handle)


def current_binary_folder_name() -> str | None:
    """:func:`binary_folder_name` of this installation's seeded binary; None without eflomal (or its binary)."""
    try:
        return binary_folder_name(_seeded_binary())
    except (ImportError, OSError, RuntimeError):
        return None


def user_tempdir() -> str:
    """``<state>/tmp/u<uid>``: this user's private folder (mode 0700) for eflomal's seeded binary, made when missing.
    A state folder may be shared, and another user's binary folder can be neither used nor removed; one of ours not
    private is made so. A folder we cannot make, or one that is not ours (a link, another user's), is a
    :class:`UserError`. Without user ids (Windows), ``<state>/tmp`` itself."""
    root, name, uid = str(state_tempdir_root()), user_folder_name(), state_tmp.euid()
    if name is None:
        return root
    folder = os.path.join(root, name)
    try:
        with contextlib.suppress(FileExistsError):
            os.mkdir(folder, 0o700)
        found = os.lstat(folder)
        if stat.S_ISDIR(found.st_mode) and found.st_uid == uid and found.st_mode & 0o077:
            handle = open_folder_no_follow(folder)
            try:
                os.fchmod(handle, 0o700)  # ours, open to others: made private (the folder opened, no link followed)
            finally:
                os.close(handle)
            found = os.lstat(folder)
    except OSError as err:
        raise UserError(f"cannot make {folder}, this user's private folder for eflomal's seeded binary "
                        f"({err.strerror or err}) (hint: set INTERLINGUA_HOME to a state folder of your own)") from None
    if not _owned_private_folder(found):
        raise UserError(f"{folder} is not a private folder of this user (owner uid {found.st_uid}, mode "
                        f"{stat.S_IMODE(found.st_mode):o}{', a symbolic link' if stat.S_ISLNK(found.st_mode) else ''}): "
                        f"eflomal's seeded binary is not written there (hint: set INTERLINGUA_HOME to a state folder "
                        f"of your own)")
    return folder


def _owned_private_folder(info: os.stat_result) -> bool:
    """A real folder (not a link) of this user that no one else may enter or write to (without user ids: a folder)."""
    uid = state_tmp.euid()
    return stat.S_ISDIR(info.st_mode) and (uid is None or info.st_uid == uid and info.st_mode & 0o077 == 0)


def _trusted_binary(folder: str, binary: str, image: bytes) -> int | None:
    """``binary`` open read-only when it is ``image`` in a folder only this user controls, else None: the folder
    (``os.lstat``, links not followed) ours and private, the file a regular file of ours that no one else may write,
    holding exactly ``image`` (read through the descriptor checked, and the one returned: a file swapped meanwhile is
    neither the one compared nor, where :meth:`VerifiedBinary.run` can, the one run). A folder removed by a
    temporary-file cleaner and made again by someone else, or a program put in its place, is not run."""
    try:
        if not _owned_private_folder(os.lstat(folder)):
            return None
        handle = open_file_no_follow(binary)
    except OSError:
        return None
    uid = state_tmp.euid()
    with os.fdopen(handle, "rb", closefd=False) as file:
        info = os.fstat(handle)
        trusted = stat.S_ISREG(info.st_mode) and info.st_size == len(image) and \
            (uid is None or info.st_uid == uid and not info.st_mode & 0o022) and file.read(len(image) + 1) == image
    if not trusted:
        os.close(handle)
        return None
    return handle


def _write_binary(folder: str, binary: str, image: bytes) -> None:
    """(Re)make ``folder`` private (mode 0700; anything else at its name is removed first) and put ``image`` in it as
    ``binary``: written under a temporary name and renamed, so a process starting it meanwhile never sees half of it."""
    try:
        found = os.lstat(folder)
    except FileNotFoundError:
        found = None
    if found is not None and not _owned_private_folder(found):
        if stat.S_ISDIR(found.st_mode):
            shutil.rmtree(folder, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(folder)
    with contextlib.suppress(FileExistsError):  # another process of the state folder made it first
        os.mkdir(folder, 0o700)
    if not _owned_private_folder(os.lstat(folder)):
        raise RuntimeError(f"{folder} is not a folder only this user may write to, and cannot be removed: eflomal's "
                           f"seeded binary is not written there (hint: remove it, and keep {os.path.dirname(folder)} "
                           f"writable by this user only)")
    handle, partial = tempfile.mkstemp(prefix=".eflomal-", dir=folder)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(image)
        _make_executable(partial)
        os.replace(partial, binary)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(partial)
        raise


def _make_executable(path: str) -> None:
    """Let this user only run ``path`` (tests simulate a ``noexec`` folder by leaving it not executable)."""
    os.chmod(path, 0o700)


def require_runnable() -> None:
    """Start the seeded binary once (``-h``: its usage) from where this process's eflomal runs will find it, before any
    of them: a state folder programs may not run from (mounted ``noexec``), one whose ``tmp`` this user may not write,
    or a binary that does not answer, is a :class:`UserError` with a hint."""
    with contextlib.ExitStack() as stack:
        try:
            binary = stack.enter_context(verified_binary())
        except OSError as err:
            where = err.filename or os.path.join(state_path(), "tmp")
            raise UserError(f"cannot write eflomal's seeded binary under {where} ({err.strerror or err}) (hint: set "
                            f"INTERLINGUA_HOME to a state folder of your own that you may write to)") from None
        try:  # it prints its usage and exits 1: that it started is what counts
            binary.run(["-h"], cwd=os.path.dirname(binary.path), capture_output=True, timeout=_START_SECONDS)
        except subprocess.TimeoutExpired:
            raise UserError(f"eflomal's seeded binary {binary.path} did not print its usage within {_START_SECONDS} s "
                            f"(hint: check this machine's load, or remove {os.path.dirname(binary.path)} to have it "
                            f"written again)") from None
        except OSError as err:
            raise UserError(_not_runnable(binary.path, err)) from None


_START_SECONDS = 60  # how long require_runnable waits for the binary's usage


def _not_runnable(binary: str, err: OSError, where: str = "") -> str:
    return (f"cannot run eflomal's seeded binary {binary} ({err.strerror or err}): programs may not run from "
            f"{os.path.dirname(binary)} (mounted noexec?) (hint: set INTERLINGUA_HOME to a state folder on a file "
            f"system mounted with exec{', ' + where if where else ''}: eflomal's binary and runs live in its tmp/)")


def seeded_image(image: bytes, path: str) -> bytes:
    """eflomal's binary ``image`` (read from ``path``) with the path it reads its seed from (``/dev/urandom``) replaced by
    :data:`SEED_FILE` (a relative path, padded with NUL bytes to the same length): run in a folder holding that file,
    it is seeded from it. A binary without exactly one such path is a ``RuntimeError``."""
    found = image.count(_SYSTEM_SEED)
    if found != 1:
        raise RuntimeError(f"{path} does not read its seed from /dev/urandom once as eflomal 2.0's binary does (the path "
                           f"occurs {found} times): its runs cannot be seeded")
    return image.replace(_SYSTEM_SEED, SEED_FILE.encode().ljust(len(_SYSTEM_SEED), b"\0"))


def _thread_limited(environment) -> dict[str, str]:
    """``environment`` with ``OMP_THREAD_LIMIT`` at most :data:`THREAD_LIMIT` (a lower one set by the user is kept) and
    ``OMP_NUM_THREADS`` one team of at most that many for the directions, then 1 for the samplers (a user's nested
    ``1,4`` gave the samplers threads of their own again)."""
    env = dict(environment)
    limit = _first_count(env.get("OMP_THREAD_LIMIT"))
    env["OMP_THREAD_LIMIT"] = str(min(limit or THREAD_LIMIT, THREAD_LIMIT))
    outer = _first_count(env.get("OMP_NUM_THREADS"))
    env["OMP_NUM_THREADS"] = f"{min(outer or THREAD_LIMIT, THREAD_LIMIT)},1"
    return env


def _first_count(value: str | None) -> int | None:
    """The first positive count of an OpenMP thread setting (``"4"``, ``"2,1"``), or None."""
    try:
        count = int(str(value).split(",")[0])
    except ValueError:
        return None
    return count if count > 0 else None


def learn_eflomal_priors(pairs: Iterable[tuple[Sequence[str], Sequence[str]]], directory: str) -> int:
    """Align ``pairs`` (empty sides skipped) without priors, write the priors they give; returns the pair count."""
    import eflomal

    kept = [(list(s), list(t)) for s, t in pairs if len(s) and len(t)]
    if not kept:
        raise ValueError("no sentence pair with two non-empty sides to learn eflomal priors from")
    sources, targets = [s for s, _ in kept], [t for _, t in kept]
    forward, reverse = _run_eflomal(sources, targets, None)
    os.makedirs(directory, exist_ok=True)
    priors = eflomal.calculate_priors(_eflomal_lines(sources), _eflomal_lines(targets), forward, reverse)
    with open(os.path.join(directory, PRIORS_FILE), "w", encoding="utf-8") as handle:
        eflomal.write_priors(handle, *priors)
    with open(os.path.join(directory, PARAMS_FILE), "w", encoding="utf-8") as handle:
        json.dump({"aligner": "eflomal", "pairs": len(kept), FILES_KEY: file_records(directory, [PRIORS_FILE])},
                  handle, indent=2)
    return len(kept)


class EflomalAligner:
    """eflomal both ways with saved priors, then ``symmetrization``, in runs of ``unit_pairs`` pairs; same outputs as
    ``BidirectionalAligner``."""

    def __init__(self, directory: str, symmetrization: str = "grow-diag-final-and", unit_pairs: int = UNIT_PAIRS):
        if isinstance(unit_pairs, bool) or not isinstance(unit_pairs, int) or unit_pairs < 1:
            raise ValueError(f"unit_pairs must be a whole number >= 1, got {unit_pairs!r}")
        if symmetrization not in SYMMETRIZATIONS:
            raise ValueError(f"symmetrization {symmetrization!r} is not supported; expected one of {', '.join(SYMMETRIZATIONS)}")
        self.priors_path = os.path.join(directory, PRIORS_FILE)
        if not os.path.exists(self.priors_path):
            raise FileNotFoundError(f"{directory} has no {PRIORS_FILE} (learn priors with learn_eflomal_priors)")
        meta = read_meta(directory, PARAMS_FILE, "eflomal")
        if meta.get("aligner") != "eflomal":
            raise ParametersError(f"{os.path.join(directory, PARAMS_FILE)} names aligner {meta.get('aligner')!r}, not "
                                  "'eflomal'")
        # the priors its record names (damaged or swapped: refused), kept: every run uses these very bytes, so a file
        # swapped in the folder after this check goes unused
        self.priors = read_recorded(directory, PRIORS_FILE, meta)
        self.symmetrization, self.unit_pairs = symmetrization, unit_pairs

    def align_pharaoh(self, sources: Sequence[Sequence[str]], targets: Sequence[Sequence[str]]) -> tuple[list[str], list[str], list[str]]:
        """Forward, reverse and symmetrized Pharaoh strings, one per pair (empty for a pair with an empty side); pairs
        ``k * unit_pairs .. (k + 1) * unit_pairs - 1`` are one eflomal run (its pairs with two non-empty sides)."""
        if len(sources) != len(targets):
            raise ValueError(f"sources has {len(sources)} sentences but targets has {len(targets)}")
        forward, reverse, symmetrized = [""] * len(sources), [""] * len(sources), [""] * len(sources)
        for start in range(0, len(sources), self.unit_pairs):
            keep = [k for k in range(start, min(start + self.unit_pairs, len(sources))) if len(sources[k]) and len(targets[k])]
            if not keep:
                continue
            fwd, rev = _run_eflomal([sources[k] for k in keep], [targets[k] for k in keep], self.priors)
            for k, f, r in zip(keep, fwd, rev):
                f_links, r_links = parse_pharaoh(f), parse_pharaoh(r)
                forward[k], reverse[k] = format_pharaoh(f_links, by_target=True), format_pharaoh(r_links)
                symmetrized[k] = format_pharaoh(symmetrize(f_links, r_links, self.symmetrization))
        return forward, reverse, symmetrized
