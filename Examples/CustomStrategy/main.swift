print("custom strategy example")
