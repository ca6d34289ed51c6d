"""``ragrail label``: a local page where people label what the tools need from them.

Two queues: a run's judged answers to validate the judge with (``queue.judged_items``,
saved to a labels file ``judge validate`` reads: ``storage.LabelsFile``), and sampled
production conversations to turn into golden cases (``queue.sample_items``, appended
to the golden set by ``ragrail add``'s own writer: ``storage.GoldenFile``). The page
(``page``) is served on the loopback interface behind a random token (``server``);
people's agreement with each other is ``agreement``.
"""
