import sys

from mockllm.cli import main

sys.exit(main())
