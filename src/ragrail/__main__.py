from ragrail.cli import main

main()
