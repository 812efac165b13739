print("Tether tour")
