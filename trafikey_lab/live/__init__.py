"""The live server: the kinds of LabServer, the keeper that never lets one outlive its owner."""
