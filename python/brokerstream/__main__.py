import sys

from brokerstream.cli import main

sys.exit(main())
