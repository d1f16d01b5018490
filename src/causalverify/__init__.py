"""CausalVerify: execute LLM-written causal-inference workflows and score the number they compute."""

from causalverify.errors import CausalVerifyError, SandboxUnavailableError, SetupError
from causalverify.families import FAMILIES, LANGUAGES, Family, Language

__version__ = "0.1.0"

__all__ = [
    "FAMILIES",
    "LANGUAGES",
    "CausalVerifyError",
    "Family",
    "Language",
    "SandboxUnavailableError",
    "SetupError",
    "__version__",
]
