"""Logging tests: `make_logging_test(autograd=level)` captures the autograd logger's records."""

import functools
import logging
import unittest

import torch


class LoggingTestCase(unittest.TestCase):
    pass


def make_logging_test(**levels):
    """Run the test with torch._logging.set_logs(**levels) and pass it the records captured
    from the loggers named after each setting (`<torch>.autograd` for autograd=...)."""

    def decorator(fn):
        @functools.wraps(fn)
        def test(self):
            records: list = []

            class Capture(logging.Handler):
                def emit(self, record):
                    records.append(record)

            handler = Capture(level=logging.DEBUG)
            loggers = [logging.getLogger(f"{torch.__name__}.{name}") for name in levels]
            for lg in loggers:
                lg.addHandler(handler)
            torch._logging.set_logs(**levels)
            try:
                fn(self, records)
            finally:
                torch._logging.set_logs()
                for lg in loggers:
                    lg.removeHandler(handler)

        return test

    return decorator
