"""Arm's test suites and ours: Arm's ``tosa_verif_conformance_generator`` /
``tosa_verif_build_tests`` folders imported as a pack (:mod:`.importer`), and a pack
exported as folders Arm's ``tosa_verif_run_tests`` runs (:mod:`.export`)."""
