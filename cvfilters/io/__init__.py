"""Files: one record per format (``formats``), which decoder reads a file, the encoders OpenCV
lacks (``encoders``, ``gif``, ``apng``, ``jpeg``), reading and writing still images (``reading``,
``writing``, and the ``metadata`` carried from one to the other), animations and multi-page TIFFs
streamed frame by frame (``frames``: ``read_frames``, ``write_frames``), and videos (``video``).

Imports ``engine`` (videos run a pipeline per frame) and the layers below it.
"""
