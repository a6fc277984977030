"""A stand-in for the measures that read a prepared run, for tests of PreparedRun's preparations.

``PreparedRun(qrels, run, [Needs(depth=5, judgments=True)])`` prepares the run as
for measures that read 5 ranks and every judgment (``ranking.prepared.run_needs``).
"""


class Needs:
    """Says what it reads with the methods of FamilyMeasure that ``run_needs`` asks."""

    def __init__(self, depth=None, document_values=False, judgments=False, scores=False):
        self.depth, self.document_values, self.judgments, self.scores = depth, document_values, judgments, scores

    def ranks_read(self):
        return self.depth

    def reads_document_values(self):
        return self.document_values

    def needs_judgments(self):
        return self.judgments

    def reads_scores(self):
        return self.scores
