from . import battle13, cardinal, kardinal, types
