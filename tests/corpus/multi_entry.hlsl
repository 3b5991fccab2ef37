// Several entry points in one file: two compute kernels sharing buffers, and a vertex/pixel pair.
// Each entry point uses a different subset of the resources.
cbuffer Globals
{
    float4 Color;
    uint Count;
    float Factor;
    float2 Pad;
};

RWStructuredBuffer<float> Data;
StructuredBuffer<float> Source;

[shader("compute")]
[numthreads(64, 1, 1)]
void Clear(uint3 id : SV_DispatchThreadID)
{
    if (id.x < Count)
        Data[id.x] = 0.0;
}

[shader("compute")]
[numthreads(8, 8, 1)]
void Accumulate(uint3 id : SV_DispatchThreadID, uint index : SV_GroupIndex)
{
    uint i = id.y * 8 + id.x;
    if (i < Count)
        Data[i] = Data[i] + Source[i] * Factor + float(index);
}

struct VSOut
{
    float4 Position : SV_Position;
    float4 Color : COLOR;
};

[shader("vertex")]
VSOut FullscreenVS(uint vid : SV_VertexID)
{
    VSOut o;
    float2 uv = float2((vid << 1) & 2, vid & 2);
    o.Position = float4(uv * 2.0 - 1.0, 0.0, 1.0);
    o.Color = float4(uv, 0.0, 1.0);
    return o;
}

[shader("pixel")]
float4 FlatPS(VSOut input) : SV_Target
{
    return input.Color * Color;
}
