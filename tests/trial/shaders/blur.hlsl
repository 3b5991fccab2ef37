// Horizontal separable blur: a row of texels into groupshared memory, then a 5-tap kernel.
#define RADIUS 2
#define GROUP 8

Texture2D<float4> Source : register(t0);
[[vk::image_format("rgba32f")]] RWTexture2D<float4> Target : register(u0);

cbuffer BlurParams : register(b0)
{
    float4 Weights;   // w0 (centre), w1, w2, unused
    uint2 Size;
    uint2 Pad_;
};

groupshared float4 Row[GROUP][GROUP + 2 * RADIUS];

[shader("compute")]
[numthreads(GROUP, GROUP, 1)]
void CSMain(uint3 gid : SV_DispatchThreadID, uint3 lid : SV_GroupThreadID)
{
    int2 size = int2(Size);
    int2 p = int2(gid.xy);
    int y = min(p.y, size.y - 1);
    Row[lid.y][lid.x + RADIUS] = Source.Load(int3(clamp(p.x, 0, size.x - 1), y, 0));
    if (lid.x < RADIUS)
    {
        Row[lid.y][lid.x] = Source.Load(int3(clamp(p.x - RADIUS, 0, size.x - 1), y, 0));
        Row[lid.y][lid.x + GROUP + RADIUS] = Source.Load(int3(clamp(p.x + GROUP, 0, size.x - 1), y, 0));
    }
    GroupMemoryBarrierWithGroupSync();
    if (p.x >= size.x || p.y >= size.y)
        return;
    uint c = lid.x + RADIUS;
    float4 sum = Row[lid.y][c] * Weights.x
               + (Row[lid.y][c - 1] + Row[lid.y][c + 1]) * Weights.y
               + (Row[lid.y][c - 2] + Row[lid.y][c + 2]) * Weights.z;
    Target[p] = sum;
}
