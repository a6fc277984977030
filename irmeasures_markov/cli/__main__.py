"""``python -m irmeasures_markov.cli``: the same as the ``irmeasures-markov`` command."""
import sys

from irmeasures_markov.cli import main

sys.exit(main())
