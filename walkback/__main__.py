from walkback.cli import main

main()
