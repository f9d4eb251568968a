"""``kestrel/Trading-v0``: Kestrel sessions as a Gymnasium environment (``kestrel-sdk[gym]``).

Importing this module registers the environment, so ``gymnasium.make("kestrel/Trading-v0",
scenario="acme-trend")`` works after ``import kestrel_sdk.gym`` (or in one step with
``gymnasium.make("kestrel_sdk.gym:kestrel/Trading-v0")``), and so do
``gymnasium.make_vec("kestrel/Trading-v0", num_envs=N)`` and stable-baselines3's
``make_vec_env``. The spaces are documented in ``kestrel_sdk.gym.spaces`` (one symbol) and
``kestrel_sdk.gym.basket`` (a basket, ``action="weights"``); episodes, grades, proofs and
seeding in ``kestrel_sdk.gym.env``; episode windows (``start``/``length``) in
``kestrel_sdk.gym.windows``; a custom reward in ``kestrel_sdk.gym.reward``; how the env
reaches the runtime in ``kestrel_sdk.gym.backends``.
"""

from __future__ import annotations

try:
    import gymnasium
except ImportError as error:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "kestrel_sdk.gym needs gymnasium: pip install gymnasium, or from your Kestrel "
        "clone: uv pip install './packages/kestrel-sdk[gym]'"
    ) from error

from .basket import Basket
from .env import TradingEnv
from .reward import Reward, StepValues
from .spaces import ActionMapping, BarHistory
from .windows import Window

__all__ = [
    "ENV_ID",
    "ActionMapping",
    "BarHistory",
    "Basket",
    "Reward",
    "StepValues",
    "TradingEnv",
    "Window",
]

ENV_ID = "kestrel/Trading-v0"

if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point="kestrel_sdk.gym.env:TradingEnv")
