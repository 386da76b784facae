"""`import pygen`: ferrohalide's pygen helper (see `ferrohalide.pygen`),
under the name the Hexagon SDK's scripts import."""
from ferrohalide.pygen import *  # noqa: F401,F403
from ferrohalide.pygen import add_param, compile, get_params  # noqa: F401
