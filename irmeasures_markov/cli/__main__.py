"""``python -m irmeasures_markov.cli``: the same as the ``irmeasures-markov`` command."""
import sys

from . import main

sys.exit(main())
