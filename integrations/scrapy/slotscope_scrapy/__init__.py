"""Watch and steer a running Scrapy crawl from Slotscope.

EXTENSIONS = {"slotscope_scrapy.SlotscopeBridge": 500}
SLOTSCOPE_URL = "<the URL `slotscope serve` prints>"
"""

from .bridge import SlotscopeBridge

__all__ = ["SlotscopeBridge"]
__version__ = "0.1.0"
