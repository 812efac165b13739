// An empty C module named TetherHTTP: see ../flags.
