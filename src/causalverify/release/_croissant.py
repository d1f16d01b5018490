"""``croissant.json``: Croissant 1.0 metadata describing the release files and record fields."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from causalverify.release._layout import SCENARIOS_FILE, SCORES_FILE

CONFORMS_TO: Final = "http://mlcommons.org/croissant/1.0"

#: the JSON-LD context of Croissant 1.0
CONTEXT: Final[dict[str, Any]] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}

_FORMATS: Final[dict[str, str]] = {
    ".csv": "text/csv",
    ".json": "application/json",
    ".jsonl": "application/jsonl",
    ".md": "text/markdown",
    ".html": "text/html",
    ".png": "image/png",
}

#: licence identifiers with a canonical URL
LICENSE_URLS: Final[dict[str, str]] = {
    "CC-BY-4.0": "https://creativecommons.org/licenses/by/4.0/",
    "CC0-1.0": "https://creativecommons.org/publicdomain/zero/1.0/",
    "MIT": "https://opensource.org/licenses/MIT",
}

#: per-cell fields (``scores.csv``): name -> (schema.org type, description)
CELL_FIELDS: Final[dict[str, tuple[str, str]]] = {
    "scenario_id": ("sc:Text", "scenario id, e.g. s001"),
    "method": ("sc:Text", "design family: DID, EVENT_STUDY, IV or RDD"),
    "difficulty": ("sc:Text", "scenario difficulty"),
    "model": ("sc:Text", "provider spec of the model that answered"),
    "language": ("sc:Text", "language asked for: r or python"),
    "sample": ("sc:Integer", "sample index of the answer"),
    "dgp_effect": ("sc:Float", "true effect of the data-generating process"),
    "baseline_effect": ("sc:Float", "canonical estimate on the same data"),
    "L1": ("sc:Integer", "1 if the model answered"),
    "L2a": ("sc:Integer", "1 if the answer holds code that parses"),
    "L2b": ("sc:Integer", "1 if the code executed without error"),
    "estimated": ("sc:Float", "extracted treatment effect (empty if none)"),
    "rel_error": ("sc:Float", "relative error against the canonical estimate"),
    "L2b_plus": ("sc:Float", "1 if executed and within tolerance; empty if unscoreable"),
    "unscoreable": ("sc:Integer", "1 if the canonical estimate is (numerically) zero"),
    "status": ("sc:Text", "cell status: the first failing stage, or correct / wrong"),
    "exec_status": ("sc:Text", "sandbox execution status"),
    "missing_package": ("sc:Text", "package the code needed but is not installed"),
    "extraction_rule": ("sc:Text", "rule that extracted the estimate"),
    "judge_effect": ("sc:Float", "estimate read by the extraction judge, when used"),
    "extraction_disagree": ("sc:Integer", "1 if the judge and deterministic extraction disagree"),
    "extraction_ambiguous": (
        "sc:Integer",
        "1 if plausible candidates printed different numbers (the rule's choice is scored)",
    ),
    "undecided": (
        "sc:Integer",
        "1 if the extraction is undecided and its candidates neither all pass nor all fail",
    ),
    "declare_asked": ("sc:Integer", "1 if the model was asked which printed number it meant"),
    "declare_accepted": ("sc:Integer", "1 if the number it declared is printed in stdout"),
    "several_blocks": (
        "sc:Integer",
        "1 if the answer had more than one code block of its language (the prompt asks for one; "
        "the first ran)",
    ),
    "matched_conversion": ("sc:Text", "event-study scale the estimate matched"),
    "fitted_effect": (
        "sc:Float",
        "fitted effect coefficient (fit log) closest to the canonical estimate",
    ),
    "fitted_right": ("sc:Integer", "1 if a fitted effect coefficient is within tolerance"),
    "truncated": ("sc:Integer", "1 if the answer hit the output-token limit"),
    "input_tokens": ("sc:Integer", "prompt tokens"),
    "output_tokens": ("sc:Integer", "answer tokens"),
    "cost_usd": ("sc:Float", "cost of the model call in US dollars"),
    "L2b_plus_lower": ("sc:Float", "undecided cells: L2b+ if no candidate passes (0); else empty"),
    "L2b_plus_upper": (
        "sc:Float",
        "undecided cells: 1 if some candidate passes, else 0; empty for other cells",
    ),
    "reported_se": ("sc:Float", "standard error the script reported for its estimate"),
    "canonical_se": ("sc:Float", "canonical SE under the reference variance estimator"),
    "se_tier": ("sc:Text", "reported SE: matches, plausible, wrong or unread"),
    "se_variant": ("sc:Text", "canonical variance estimator the reported SE matches"),
    "se_ratio": ("sc:Float", "reported SE over the canonical reference SE"),
    "ci_covers": ("sc:Float", "1 if the reported interval covers the true effect"),
    "significance_agrees": ("sc:Float", "1 if the 5% significance call agrees with the canonical"),
    "L2c": ("sc:Float", "1 if L2b+ and the reported SE matches or is plausible"),
}

#: per-scenario fields (``scenarios.csv``)
SCENARIO_FIELDS: Final[dict[str, tuple[str, str]]] = {
    "scenario_id": ("sc:Text", "scenario id"),
    "family": ("sc:Text", "design family"),
    "difficulty": ("sc:Text", "difficulty"),
    "group": ("sc:Text", "grid group"),
    "beta": ("sc:Float", "true effect of the data-generating process"),
    "canonical_estimate": ("sc:Float", "canonical estimate on the realised CSV"),
    "canonical_se": ("sc:Float", "standard error of the canonical estimate"),
    "data_file": ("sc:Text", "the CSV, relative to the suite folder"),
    "csv_sha256": ("sc:Text", "SHA-256 of the CSV"),
}


def build_croissant(
    *,
    name: str,
    description: str,
    license_id: str,
    version: str,
    files: Sequence[tuple[str, str]],
) -> dict[str, Any]:
    """The Croissant 1.0 document of a release.

    Parameters
    ----------
    name, description, license_id, version
        Dataset name, description, licence (SPDX id or URL) and version.
    files
        ``(relative path, sha256)`` of every file the document describes, sorted.
    """
    return {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": CONFORMS_TO,
        "name": name,
        "description": description,
        "license": LICENSE_URLS.get(license_id, license_id),
        "version": version,
        "distribution": [_file_object(rel, sha) for rel, sha in files],
        "recordSet": [
            _record_set(
                "cells",
                "One row per cell (scenario, model, language, sample).",
                SCORES_FILE,
                CELL_FIELDS,
            ),
            _record_set(
                "scenarios", "One row per scenario of the suite.", SCENARIOS_FILE, SCENARIO_FIELDS
            ),
        ],
    }


def _file_object(rel: str, sha: str) -> dict[str, Any]:
    suffix = rel[rel.rfind(".") :] if "." in rel.rsplit("/", 1)[-1] else ""
    return {
        "@type": "cr:FileObject",
        "@id": rel,
        "name": rel,
        "contentUrl": rel,
        "encodingFormat": _FORMATS.get(suffix, "text/plain"),
        "sha256": sha,
    }


def _record_set(
    name: str, description: str, source: str, fields: Mapping[str, tuple[str, str]]
) -> dict[str, Any]:
    return {
        "@type": "cr:RecordSet",
        "@id": name,
        "name": name,
        "description": description,
        "field": [
            {
                "@type": "cr:Field",
                "@id": f"{name}/{column}",
                "name": column,
                "description": text,
                "dataType": kind,
                "source": {"fileObject": {"@id": source}, "extract": {"column": column}},
            }
            for column, (kind, text) in fields.items()
        ],
    }
