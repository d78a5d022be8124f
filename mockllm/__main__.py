import sys

from mockllm._cli import main

sys.exit(main())
