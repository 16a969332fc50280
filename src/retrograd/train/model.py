"""The digits CNN, written once against the torch API and built with either library."""

from __future__ import annotations

from typing import Any


def build_cnn(lib: Any, checkpoint_blocks: bool = False) -> Any:
    nn = lib.nn

    class DigitsCNN(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.block1 = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
                                        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
                                        nn.MaxPool2d(2))
            self.block2 = nn.Sequential(nn.Flatten(), nn.Linear(32 * 4 * 4, 64), nn.ReLU())
            self.head = nn.Linear(64, 10)
            self.checkpoint_blocks = checkpoint_blocks

        def forward(self, x):
            if self.checkpoint_blocks and self.training:
                from importlib import import_module

                ckpt = import_module(lib.__name__ + ".utils.checkpoint").checkpoint
                h = ckpt(self.block1, x, use_reentrant=False)
                h = ckpt(self.block2, h, use_reentrant=False)
            else:
                h = self.block2(self.block1(x))
            return self.head(h)

    return DigitsCNN()
