// Vertex entry points that write no SV_Position: each returns a bare value with a user
// semantic (they would feed a tessellation or geometry stage). Slang's Metal made the value a
// [[position]]; the varying must stay a [[user(...)]] varying.
RWStructuredBuffer<float> Written : register(u0);

[shader("vertex")]
float Scalar(uint id : SV_VertexID) : A
{
    Written[id] = 1.0;
    return 1.0;
}

[shader("vertex")]
float2 Pair(float2 p : POSITION) : TEXCOORD3
{
    return p;
}

[shader("vertex")]
uint Index(uint id : SV_VertexID) : BLENDINDICES1
{
    return id;
}
