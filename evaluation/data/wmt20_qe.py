"""WMT20 QE task 1 (MLQE-PE, Fomicheva et al. 2020): ``{src}-{tgt}/{split}.{src}{tgt}.df.short.tsv`` with
a header including ``original``, ``translation`` and ``z_mean`` (mean z-normalised DA score)."""

from __future__ import annotations

from interlingua.evaluation.data.files import read_tsv_dicts
from interlingua.evaluation.data.records import ScoredPairs


def load_wmt20_qe(url: str, score_column: str = "z_mean") -> ScoredPairs:
    """Source sentences (``first``), machine translations (``second``) and human scores."""
    data = ScoredPairs()
    for number, row in read_tsv_dicts(url):
        if "__error__" in row:
            data.rejected.append((f"{url}:{number}", row["__error__"]))
            continue
        try:
            score = float(row[score_column])
            first, second = row["original"], row["translation"]
        except KeyError as err:
            raise ValueError(f"{url} lacks column {err}; expected original, translation, {score_column}") from None
        except ValueError:
            data.rejected.append((f"{url}:{number}", f"{score_column} {row[score_column]!r} is not a number"))
            continue
        data.first.append(first)
        data.second.append(second)
        data.scores.append(score)
    return data
